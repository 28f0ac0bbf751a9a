import { labConformance } from '../helpers/labConformance.js';
import { apiLinkConformance } from '../helpers/apiLinkConformance.js';

// The Lab conformance suite on the local runtime: real processes (the api, the fault proxy,
// redis-server, Postgres), started by the lab itself.
labConformance('local', {
  caps: {
    processes: true,
    scrape: true,
    pauseUndo: true,
    startUndo: 'a killed component dies with the local lab, which lab reset stops: nothing to start',
    linkUndo: true,
    teardown: true,
    downStops: true,
  },
});

// The clients' link to the api (link api, api[i]) through the local fault proxy.
apiLinkConformance('local', { scrape: true });
