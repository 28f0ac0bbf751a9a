<?php
// /metrics of the php-fpm reference image (docker/offline/reference-entrypoint.sh runs it with
// `php -S`, one process, on the metrics port): nginx's stub_status and FPM's status page as the
// bench's series, as orchestrator/lab/local/referenceMetrics.ts gives them on the local runtime
// (see there for what each is and why):
//   received  = nginx's requests − the status requests this script made itself
//   completed = FPM's accepted conn − active processes
//   queue     = FPM's listen queue;  busy = active processes
// The status requests it made are counted in METABENCH_OWN_FILE (PHP's server keeps nothing
// between requests; it serves one at a time, so the count is not raced).
$path = parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH);
if ($path !== '/metrics') {
    http_response_code(404);
    echo "only /metrics here\n";
    return;
}
$base = getenv('METABENCH_STATUS_URL');
$ownFile = getenv('METABENCH_OWN_FILE');

function fetch(string $url): string
{
    $ctx = stream_context_create(['http' => ['timeout' => 2, 'ignore_errors' => true]]);
    $body = @file_get_contents($url, false, $ctx);
    $status = isset($http_response_header[0]) ? $http_response_header[0] : 'no answer';
    if ($body === false || !preg_match('#^HTTP/\S+ 2\d\d#', $status)) {
        throw new RuntimeException("$url: $status");
    }
    return $body;
}

function ownRequests(string $file, int $add): int
{
    $n = (int) @file_get_contents($file) + $add;
    file_put_contents($file, (string) $n);
    return $n;
}

try {
    // Counted before they are made: each reaches nginx's counter as it is read.
    $own = ownRequests($ownFile, 2);
    $fpm = json_decode(fetch("$base/fpm-status"), true);
    foreach (['accepted conn', 'listen queue', 'active processes', 'total processes'] as $f) {
        if (!is_array($fpm) || !is_int($fpm[$f] ?? null)) {
            throw new RuntimeException("php-fpm's status page has no \"$f\" number");
        }
    }
    $stub = fetch("$base/nginx-status");
    if (!preg_match('/server accepts handled requests\s+(\d+)\s+(\d+)\s+(\d+)/', $stub, $m)) {
        throw new RuntimeException("nginx's stub_status page is not as expected");
    }
} catch (Throwable $e) {
    http_response_code(503);
    echo $e->getMessage(), "\n";
    return;
}
$accepted = $fpm['accepted conn'];
$active = $fpm['active processes'];
$lines = [
    'api_requests_received_total ' . ((int) $m[3] - $own),
    'api_requests_completed_total ' . max(0, $accepted - $active),
    'api_queue_depth ' . $fpm['listen queue'],
    'api_busy_workers ' . $active,
    'phpfpm_accepted_connections_total ' . $accepted,
    'phpfpm_total_processes ' . $fpm['total processes'],
];
$optional = [
    'listen queue len' => 'phpfpm_listen_queue_length',
    'max children reached' => 'phpfpm_max_children_reached_total',
    'slow requests' => 'phpfpm_slow_requests_total',
];
foreach ($optional as $field => $name) {
    if (isset($fpm[$field])) {
        $lines[] = "$name {$fpm[$field]}";
    }
}
header('Content-Type: text/plain; version=0.0.4; charset=utf-8');
echo implode("\n", $lines), "\n";
