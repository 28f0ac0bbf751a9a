<?php
// One request of the PHP-FPM reference lab. Its work is declared by metabench (FastCGI
// parameters set in nginx.conf), so the pool's capacity is predictable: c / S.
// CPU first, then the sleep: a request holds its child for cpu + sleep milliseconds.
$cpuMs = (float) ($_SERVER['METABENCH_CPU_MS'] ?? 0);
$workMs = (float) ($_SERVER['METABENCH_WORK_MS'] ?? 0);
if ($cpuMs > 0) {
    $until = hrtime(true) + (int) ($cpuMs * 1e6);
    $x = 0;
    while (hrtime(true) < $until) {
        $x = ($x * 1103515245 + 12345) & 0x7fffffff;
    }
}
if ($workMs > 0) {
    usleep((int) round($workMs * 1000));
}
header('Content-Type: text/plain');
echo "ok\n";
