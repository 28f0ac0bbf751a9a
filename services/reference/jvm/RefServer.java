import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * metabench's JVM reference server: the JDK's HttpServer on a fixed pool of c threads, a
 * FIFO queue in front (unbounded, or bounded with 503 when full), each request holding a
 * declared number of bytes from the moment it is received until it is answered, and, when
 * served, allocating churnBytes of short-lived garbage and doing workMs of sleep (after
 * cpuMs of CPU). Capacity is c / S while the collector keeps up; under a long queue the
 * live heap grows with the requests held, and near a full heap every allocation waits for
 * a full collection (the OSDI '22 GC mechanism). /metrics, on a port of its own (answered by its own thread,
 * not the pool), reports it from the JVM's own MXBeans in Prometheus text, with the bench's
 * series names.
 *
 * Arguments: key=value (port, metricsPort, host, workers, workMs, cpuMs, allocBytes,
 * churnBytes, queue, backlog); queue=0 means unbounded.
 */
public final class RefServer {
  /** The held bytes are split in chunks of this size: ordinary objects, not humongous ones. */
  private static final int CHUNK = 64 * 1024;

  private static final AtomicLong received = new AtomicLong();
  private static final AtomicLong completed = new AtomicLong();
  private static final AtomicLong rejected = new AtomicLong();

  public static void main(String[] args) throws IOException {
    Map<String, String> a = new HashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq < 0) throw new IllegalArgumentException("expected key=value, got " + arg);
      a.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    String host = a.getOrDefault("host", "127.0.0.1");
    int port = Integer.parseInt(a.get("port"));
    int metricsPort = Integer.parseInt(a.get("metricsPort"));
    int workers = Integer.parseInt(a.get("workers"));
    double workMs = Double.parseDouble(a.getOrDefault("workMs", "0"));
    double cpuMs = Double.parseDouble(a.getOrDefault("cpuMs", "0"));
    long allocBytes = Long.parseLong(a.getOrDefault("allocBytes", "0"));
    long churnBytes = Long.parseLong(a.getOrDefault("churnBytes", "0"));
    int queue = Integer.parseInt(a.getOrDefault("queue", "0"));
    int backlog = Integer.parseInt(a.getOrDefault("backlog", "4096"));

    BlockingQueue<Runnable> q =
        queue > 0 ? new ArrayBlockingQueue<>(queue) : new LinkedBlockingQueue<>();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(workers, workers, 0, TimeUnit.MILLISECONDS, q, (r, ex) -> ((Held) r).refuse());
    pool.prestartAllCoreThreads();

    // The server's own thread reads each request's headers and runs this handler (no
    // executor: the default runs it inline), which only hands the request to the pool: that
    // is when it is received, and when its bytes are allocated; they stay reachable until
    // it is answered. (An executor given to HttpServer would also be handed every closed
    // keep-alive connection, before any request is read, so it cannot count requests.)
    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), backlog);
    server.createContext(
        "/",
        ex -> {
          received.incrementAndGet();
          boolean health = "/health".equals(ex.getRequestURI().getPath());
          // A full queue refuses before the request's bytes are allocated: a bounded queue
          // sheds load at the door, where it costs nothing.
          if (queue > 0 && q.remainingCapacity() == 0) {
            refuse(ex);
            return;
          }
          Held h;
          try {
            h =
                new Held(
                    ex,
                    health ? 0 : allocBytes,
                    health ? 0 : churnBytes,
                    health ? 0 : workMs,
                    health ? 0 : cpuMs);
          } catch (OutOfMemoryError e) {
            // No room for the request's bytes: it fails, and this thread (the server's only
            // reader of requests) lives on, as a server's error handler keeps it.
            failed(ex);
            return;
          }
          pool.execute(h);
        });
    server.setExecutor(null);

    HttpServer metrics = HttpServer.create(new InetSocketAddress(host, metricsPort), 64);
    metrics.createContext(
        "/metrics",
        ex -> respond(ex, 200, metricsText(pool), "text/plain; version=0.0.4; charset=utf-8"));
    metrics.setExecutor(null);

    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.stop(0);
                  metrics.stop(0);
                  pool.shutdownNow();
                }));
    metrics.start();
    server.start();
    System.out.println("{\"event\":\"listening\",\"port\":" + port + "}");
  }

  /** A received request: its bytes, held until it is answered. */
  private static final class Held implements Runnable {
    private final HttpExchange ex;
    private final long churnBytes;
    private final double workMs;
    private final double cpuMs;
    private byte[][] bytes;

    Held(HttpExchange ex, long allocBytes, long churnBytes, double workMs, double cpuMs) {
      this.ex = ex;
      this.churnBytes = churnBytes;
      this.workMs = workMs;
      this.cpuMs = cpuMs;
      int n = (int) ((allocBytes + CHUNK - 1) / CHUNK);
      bytes = new byte[n][];
      long left = allocBytes;
      for (int i = 0; i < n; i++) {
        int size = (int) Math.min(CHUNK, left);
        bytes[i] = new byte[size];
        // Touch each chunk, so the allocation is the request's, not a lazily zeroed page.
        if (size > 0) bytes[i][size - 1] = 1;
        left -= size;
      }
    }

    @Override
    public void run() {
      try {
        churn(churnBytes);
        work(workMs, cpuMs);
        respond(ex, 200, "ok\n");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        quietly(ex, 500, "interrupted\n");
      } catch (IOException e) {
        ex.close(); // the client went away
      } catch (OutOfMemoryError e) {
        // The heap ran out: this request fails, but its connection is closed, not leaked.
        bytes = null;
        closeQuietly(ex);
      } finally {
        bytes = null;
        completed.incrementAndGet();
      }
    }

    /** The queue is full: 503 at once (the executor's refusal, should a check race). */
    void refuse() {
      bytes = null;
      RefServer.refuse(ex);
    }
  }

  /** A request that could not be allocated: counted as received and completed, its connection closed. */
  private static void failed(HttpExchange ex) {
    closeQuietly(ex);
    completed.incrementAndGet();
  }

  /** Closes the exchange; a close that fails too (the heap still full) is let go. */
  private static void closeQuietly(HttpExchange ex) {
    try {
      ex.close();
    } catch (Throwable t) {
      // nothing more to free: the connection goes when its client closes it
    }
  }

  /** 503 at once, on the server's thread: the queue is full. */
  private static void refuse(HttpExchange ex) {
    rejected.incrementAndGet();
    quietly(ex, 503, "queue full\n");
    completed.incrementAndGet();
  }

  private static void quietly(HttpExchange ex, int status, String body) {
    try {
      respond(ex, status, body);
    } catch (IOException e) {
      ex.close();
    }
  }

  /** The request's short-lived garbage (parsing, building the answer): allocated, touched, dropped. */
  private static void churn(long churnBytes) {
    long left = churnBytes;
    while (left > 0) {
      int size = (int) Math.min(CHUNK, left);
      byte[] b = new byte[size];
      b[size - 1] = 1;
      sink = b; // escapes, so the JIT cannot elide the allocation
      left -= size;
    }
    sink = null;
  }

  /** Where churn's chunks escape to. */
  private static volatile byte[] sink;

  private static void work(double workMs, double cpuMs) throws InterruptedException {
    if (cpuMs > 0) {
      long until = System.nanoTime() + (long) (cpuMs * 1e6);
      long x = 0;
      while (System.nanoTime() < until) x = (x * 1103515245L + 12345L) & 0x7fffffffL;
      if (x == -1) System.out.print(""); // keeps the loop from being optimised away
    }
    if (workMs > 0) {
      long nanos = (long) (workMs * 1e6);
      Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
    }
  }

  private static String metricsText(ThreadPoolExecutor pool) {
    long gcMs = 0;
    long gcCount = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      gcMs += Math.max(0, gc.getCollectionTime());
      gcCount += Math.max(0, gc.getCollectionCount());
    }
    MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    StringBuilder s = new StringBuilder(1024);
    counter(s, "api_requests_received_total", "Requests the server handed to its pool", received.get());
    counter(s, "api_requests_completed_total", "Requests answered (or refused)", completed.get());
    counter(s, "api_rejected_total{reason=\"queue_full\"}", "Requests refused by the full queue", rejected.get());
    gauge(s, "api_queue_depth", "Requests waiting for a thread", pool.getQueue().size());
    gauge(s, "api_busy_workers", "Threads serving a request", pool.getActiveCount());
    // Cumulative collection time: its increase per second is GC time per second.
    s.append("# HELP jvm_gc_time_seconds_total Time the collectors took (GarbageCollectorMXBean)\n")
        .append("# TYPE jvm_gc_time_seconds_total counter\n")
        .append("jvm_gc_time_seconds_total ")
        .append(gcMs / 1000.0)
        .append('\n');
    counter(s, "jvm_gc_collections_total", "Collections (GarbageCollectorMXBean)", gcCount);
    gauge(s, "jvm_memory_heap_used_bytes", "Heap in use (MemoryMXBean)", heap.getUsed());
    gauge(s, "jvm_memory_heap_max_bytes", "Heap limit (MemoryMXBean)", heap.getMax());
    return s.toString();
  }

  private static void counter(StringBuilder s, String sample, String help, long v) {
    String name = sample.replaceAll("\\{.*", "");
    s.append("# HELP ").append(name).append(' ').append(help).append('\n');
    s.append("# TYPE ").append(name).append(" counter\n");
    s.append(sample).append(' ').append(v).append('\n');
  }

  private static void gauge(StringBuilder s, String name, String help, long v) {
    s.append("# HELP ").append(name).append(' ').append(help).append('\n');
    s.append("# TYPE ").append(name).append(" gauge\n");
    s.append(name).append(' ').append(v).append('\n');
  }

  private static void respond(HttpExchange ex, int status, String body) throws IOException {
    respond(ex, status, body, "text/plain");
  }

  private static void respond(HttpExchange ex, int status, String body, String type)
      throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, b.length);
    try (OutputStream o = ex.getResponseBody()) {
      o.write(b);
    }
    ex.close();
  }
}
