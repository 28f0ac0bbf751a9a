// Runs autocannon in this process (pinned by the caller) and prints one JSON line with
// its requests and this process's CPU time, so the benchmark compares like with like.
import autocannon from 'autocannon';

const [url, rate, seconds, connections] = process.argv.slice(2);
const cpu0 = process.cpuUsage();
const result = await autocannon({
  url: url!,
  overallRate: Number(rate),
  duration: Number(seconds),
  connections: Number(connections ?? 50),
});
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  JSON.stringify({
    requests: result.requests.total,
    errors: result.errors,
    non2xx: result.non2xx,
    cpuS: (cpu.user + cpu.system) / 1e6,
    rssBytes: process.memoryUsage().rss,
  }) + '\n',
);
