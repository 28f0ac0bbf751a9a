import type Docker from 'dockerode';

/**
 * The engine's lifecycle events of a compose project's containers, live from now until
 * stop(), which returns them in order as "service action" (the engine's ring buffer is too
 * short for a lookup afterwards: the healthchecks fill it).
 */
export async function watchComposeEvents(
  docker: Docker,
  project: string,
  actions: readonly string[],
  service?: string,
): Promise<{ stop: () => string[] }> {
  const label = [`com.docker.compose.project=${project}`];
  if (service) label.push(`com.docker.compose.service=${service}`);
  const stream = (await docker.getEvents({
    filters: { type: ['container'], event: [...actions], label },
  })) as NodeJS.ReadableStream & { destroy: () => void };
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return {
    stop: () => {
      stream.destroy();
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const e = JSON.parse(l) as { Action: string; Actor: { Attributes: Record<string, string> } };
          return `${e.Actor.Attributes['com.docker.compose.service']} ${e.Action}`;
        });
    },
  };
}
