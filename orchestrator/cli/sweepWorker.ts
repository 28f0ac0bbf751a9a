import { servePointJob } from '../sweep/pointWorker.js';
import { registerRuntimes } from './runtimes.js';

// A simulated sweep point's worker thread (sweep --jobs): the runtimes as the CLI has them, then the point.
registerRuntimes();
servePointJob();
