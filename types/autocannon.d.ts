declare module 'autocannon' {
  interface Options {
    url: string;
    overallRate?: number;
    duration?: number;
    connections?: number;
  }
  interface Result {
    requests: { total: number };
    errors: number;
    non2xx: number;
  }
  export default function autocannon(o: Options): Promise<Result>;
}
