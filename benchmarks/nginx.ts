import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free loopback port (bound, read, released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Debian's nginx answering `200 ok` on loopback from one worker pinned to `cpu`:
 * a server that is never the bottleneck of a load-generator benchmark.
 */
export async function startNginx(cpu: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const bin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
  if (!bin) throw new Error('nginx is not installed: apt-get install -y nginx');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'metabench-nginx-'));
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 65536; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port} backlog=65535;
    location / { return 200 "ok\\n"; }
  }
}
`,
  );
  const child: ChildProcess = spawn(
    'taskset',
    ['-c', String(cpu), bin, '-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'],
    {
      stdio: 'ignore',
    },
  );
  const url = `http://127.0.0.1:${port}/`;
  process.on('exit', () => child.kill('SIGKILL'));
  let up = false;
  for (let i = 0; i < 100 && !up; i++) {
    try {
      up = (await fetch(url)).ok;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  if (!up) {
    child.kill('SIGKILL');
    throw new Error(`nginx did not answer on ${url} within 5 s (see ${dir}/error.log)`);
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGQUIT');
      }),
  };
}
