import { coreToSpare, serveJobs } from '../../foundation/workers.js';

// A pool's thread that answers each job with what coreToSpare says there (foundation/workers.test.ts).
serveJobs<number, boolean>(async () => coreToSpare());
