import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePrometheusText } from '../../scrape/prometheusText.js';
import { fpmStatusAsPrometheus, parseFpmStatus, parseNginxRequests } from './referenceMetrics.js';

// What php-fpm 8.2 printed for `/fpm-status?json` with 8 children saturated (a real answer).
const BUSY = JSON.stringify({
  pool: 'ref',
  'process manager': 'static',
  'start time': 1796524733,
  'start since': 12,
  'accepted conn': 413,
  'listen queue': 57,
  'max listen queue': 61,
  'listen queue len': 4096,
  'idle processes': 0,
  'active processes': 8,
  'total processes': 8,
  'max active processes': 8,
  'max children reached': 0,
  'slow requests': 0,
});
// What nginx's stub_status printed (its format since nginx 1.x).
const NGINX =
  'Active connections: 371 \nserver accepts handled requests\n 380 380 981 \nReading: 0 Writing: 371 Waiting: 0 \n';

test('the FPM status maps onto the bench series: completed = accepted − active, queue and busy as FPM counts them, received as given', () => {
  const m = parsePrometheusText(fpmStatusAsPrometheus(parseFpmStatus(BUSY), 478));
  assert.equal(m.get('api_requests_received_total'), 478);
  assert.equal(m.get('api_requests_completed_total'), 405);
  assert.equal(m.get('api_queue_depth'), 57);
  assert.equal(m.get('api_busy_workers'), 8);
  assert.equal(m.get('phpfpm_listen_queue_length'), 4096);
  assert.equal(m.get('phpfpm_total_processes'), 8);
});

test("nginx's requests counter is read from stub_status", () => {
  assert.equal(parseNginxRequests(NGINX), 981);
  assert.throws(() => parseNginxRequests('<html>404</html>'), /stub_status page is not as expected/);
});

test('a status page without a field, or not JSON, is an error naming it', () => {
  const { ['listen queue']: _gone, ...rest } = JSON.parse(BUSY) as Record<string, unknown>;
  assert.throws(() => parseFpmStatus(JSON.stringify(rest)), /no "listen queue" number/);
  assert.throws(() => parseFpmStatus('pool: ref'), /not JSON/);
});
