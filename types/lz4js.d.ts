declare module 'lz4js' {
  /** One LZ4 frame (magic, descriptor, blocks, end mark) holding src. */
  export function compress(src: Uint8Array, maxSize?: number): Uint8Array;
  /** The bytes of one LZ4 frame. */
  export function decompress(src: Uint8Array, maxSize?: number): Uint8Array;
}
