import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchError } from '../../../foundation/errors.js';
import { PartialScrapeError } from '../partialScrape.js';
import { findReferenceBinary, JAVA, JAVAC } from './binaries.js';
import { freePort } from './dataServices.js';
import { GcLog, withoutGcCounters } from './jvmGcLog.js';
import { httpGet, REFERENCE_DIR, spawnGuarded, stopGuarded, waitHealthy } from './referenceProcess.js';
import {
  predictedCapacityPerS,
  type JvmCollector,
  type ReferenceOptions,
  type ReferenceServer,
} from './referenceServer.js';

const HOST = '127.0.0.1';
const SOURCE = join(REFERENCE_DIR, 'jvm', 'RefServer.java');

const COLLECTOR_FLAG: Record<JvmCollector, string> = {
  serial: '-XX:+UseSerialGC',
  parallel: '-XX:+UseParallelGC',
  g1: '-XX:+UseG1GC',
};

/**
 * The folder holding RefServer.class, compiled with javac on first use and kept under
 * the temporary directory, named by the source's and the compiler's hash (an edit or
 * another JDK compiles again). Compiled into a folder of its own and renamed into place,
 * so two metabench processes starting at once do not read a half-written class.
 */
export function compiledRefServer(javac = findReferenceBinary(JAVAC)): string {
  const source = readFileSync(SOURCE);
  const hash = createHash('sha256').update(source).update(javac).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `metabench-jvm-${hash}`);
  if (existsSync(join(dir, 'RefServer.class'))) return dir;
  const work = mkdtempSync(join(tmpdir(), 'metabench-jvm-build-'));
  try {
    execFileSync(javac, ['-d', work, '-Xlint:all', SOURCE], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    rmSync(work, { recursive: true, force: true });
    const e = err as { stderr?: Buffer; message: string };
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `javac could not compile ${SOURCE}: ${e.stderr?.toString().trim() || e.message}`,
    );
  }
  try {
    renameSync(work, dir);
  } catch {
    rmSync(work, { recursive: true, force: true }); // another process put it there first
  }
  return dir;
}

/**
 * services/reference/jvm/RefServer.java on the JDK's HttpServer: a fixed pool of c
 * threads, requests that hold `allocBytes` from receipt to answer, a heap bounded by
 * -Xmx and the collector chosen. Its /metrics (own port, own thread) comes from the JVM's
 * MXBeans; its GC figures from its GC log, read from outside: a JVM that collects all the
 * time (the state it is here to reproduce) answers /metrics late or not at all, while the
 * VM still writes each pause to the log. A scrape whose /metrics fails is then partial.
 */
export async function startJvm(o: ReferenceOptions): Promise<ReferenceServer> {
  const j = o.jvm!;
  const java = findReferenceBinary(JAVA);
  const classes = compiledRefServer();
  const log = o.log ?? (() => undefined);
  const port = o.port || (await freePort(HOST));
  const metricsPort = o.metricsPort || (await freePort(HOST));
  const dir = mkdtempSync(join(tmpdir(), 'metabench-jvm-run-'));
  const gcLog = new GcLog(join(dir, 'gc.log'));
  const args = [
    `-Xmx${j.heapMb}m`,
    `-Xms${j.heapMb}m`,
    COLLECTOR_FLAG[j.collector],
    // No hs_err or heap dump files left behind in the working directory.
    '-XX:ErrorFile=/dev/null',
    '-XX:-UsePerfData',
    // One line per pause, never rotated (GcLog reads the one file as it grows).
    `-Xlog:gc:file=${join(dir, 'gc.log')}:uptime,level,tags:filecount=0`,
    // The JDK's HttpServer writes a response's headers and body apart; without TCP_NODELAY
    // the client's delayed ACK holds the body back 40 ms (measured: 143 ms for 100 ms of work).
    '-Dsun.net.httpserver.nodelay=true',
    '-cp',
    classes,
    'RefServer',
    `host=${HOST}`,
    `port=${port}`,
    `metricsPort=${metricsPort}`,
    `workers=${o.workers}`,
    `workMs=${o.workMs}`,
    `cpuMs=${o.cpuMs ?? 0}`,
    `allocBytes=${j.allocBytes}`,
    `churnBytes=${j.churnBytes ?? 0}`,
    `queue=${j.queue ?? 0}`,
  ];
  const started = [spawnGuarded('jvm', java, args, { log, cwd: tmpdir() })];
  const stop = async (): Promise<void> => {
    for (const s of started) await stopGuarded(s.child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = `http://${HOST}:${port}`;
    await waitHealthy('the JVM reference server', `${url}/health`, started);
    const metricsUrl = `http://${HOST}:${metricsPort}/metrics`;
    return {
      kind: 'jvm',
      url: `${url}/`,
      healthUrl: `${url}/health`,
      metricsUrl,
      predictedCapacityPerS: predictedCapacityPerS(o.workers, o.workMs, o.cpuMs),
      pids: started.map((s) => s.child.pid!),
      tempDir: dir,
      scrapeText: async (timeoutMs = 800) => {
        let text: string;
        try {
          text = await httpGet(metricsUrl, timeoutMs);
        } catch (err) {
          gcLog.poll();
          throw new PartialScrapeError(gcLog.text(), err);
        }
        gcLog.poll();
        return withoutGcCounters(text) + gcLog.text();
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
