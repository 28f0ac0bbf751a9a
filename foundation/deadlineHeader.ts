/**
 * The header that carries an origin's remaining deadline on every attempt, written by
 * the load generator's deadline policy and read by the api (one name for both ends):
 *
 *   x-deadline-ms: <whole milliseconds left until the origin's deadline, at the moment
 *                   this attempt is sent; floor, never negative>
 *
 * Absent when the origin has no deadline. Relative (not an absolute time) so that
 * client and server need no shared clock; a server that honours it drops the request
 * once that many ms have passed since it arrived (queue wait included), because the
 * client will no longer use the answer. Retries and hedges carry what is left then.
 */
export const DEADLINE_HEADER = 'x-deadline-ms';
