/** The port checks moved to the engine code the Docker-based labs share (a system's own compose file too). */
export * from '../engine/ports.js';
