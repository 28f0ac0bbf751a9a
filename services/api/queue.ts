/**
 * The discipline of the queue in front of the api's workers (waitingJobs.ts). FIFO
 * serves the oldest request first (the default, and the discipline under which a
 * backlog of requests whose clients have given up is served before anyone still
 * waiting); LIFO serves the newest first, so under overload fresh requests meet their
 * deadline and stale ones starve. A bound turns either into a bounded queue: a request
 * arriving when it is full is refused.
 */
export type QueueDiscipline = 'fifo' | 'lifo';
