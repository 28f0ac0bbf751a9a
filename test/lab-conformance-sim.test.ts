import { labConformance } from './helpers/labConformance.js';
import { apiLinkConformance } from './helpers/apiLinkConformance.js';

// The Lab conformance suite on the simulation (in virtual time, through its own transport):
// a unit test, it starts no process.
const nothingOutlives = 'simulated, nothing outlives the run';
labConformance('sim', {
  caps: {
    processes: 'the simulation has no processes',
    scrape: 'the simulation is not scraped, its series come from its own counters',
    pauseUndo: nothingOutlives,
    startUndo: nothingOutlives,
    linkUndo: nothingOutlives,
    teardown: nothingOutlives,
    downStops: 'the simulation has no processes, down() has nothing to stop',
  },
});

// The clients' link to the api (link api, api[i]) as the simulation models it (sim/transport.ts).
apiLinkConformance('sim', { scrape: 'the simulation is not scraped, its series come from its own counters' });
