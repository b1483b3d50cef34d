/**
 * @module sha256
 * A small, dependency-free SHA-256 (FIPS 180-4) for the browser subpath,
 * where `node:crypto` is absent and WebCrypto's digest is async-only. The
 * Node entry point never uses it: `crypto.hash` is several times faster.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const W = new Int32Array(64);

function compress(state: Int32Array, block: Uint8Array, offset: number): void {
  for (let t = 0; t < 16; t++) {
    const i = offset + 4 * t;
    W[t] = (block[i]! << 24) | (block[i + 1]! << 16) | (block[i + 2]! << 8) | block[i + 3]!;
  }
  compressW(state);
}

/** Runs the 64 rounds over the message schedule whose first 16 words are already in W. */
function compressW(state: Int32Array): void {
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15]!;
    const w2 = W[t - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let f = state[5]!;
  let g = state[6]!;
  let h = state[7]!;
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (h + S1 + ch + K[t]! + W[t]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}

/**
 * SHA-256 of `data`, returned as 32 bytes.
 *
 * @example
 * ```ts
 * toHex(sha256(new Uint8Array())); // 'e3b0c442…b855'
 * ```
 */
export function sha256(data: Uint8Array): Uint8Array {
  const state = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const fullBlocks = Math.floor(data.length / 64);
  for (let i = 0; i < fullBlocks; i++) compress(state, data, i * 64);
  const rest = data.length - fullBlocks * 64;
  const tail = new Uint8Array(rest < 56 ? 64 : 128);
  tail.set(data.subarray(fullBlocks * 64));
  tail[rest] = 0x80;
  // Message length in bits as a 64-bit big-endian integer; data shorter than 2^53 bits.
  const bitLength = data.length * 8;
  const view = new DataView(tail.buffer);
  view.setUint32(tail.length - 8, Math.floor(bitLength / 2 ** 32));
  view.setUint32(tail.length - 4, bitLength >>> 0);
  for (let offset = 0; offset < tail.length; offset += 64) compress(state, tail, offset);
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(4 * i, state[i]!);
  return out;
}

const nodeState = new Int32Array(8);
const IV = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/**
 * SHA-256(0x01 || left || right) for two 32-byte hashes: an RFC 6962
 * interior node. Builds the two padded blocks straight into the message
 * schedule, with no allocation but the result. For 65-byte inputs this
 * beats `crypto.hash`, whose per-call overhead dominates at that size.
 */
export function sha256Node(left: Uint8Array, right: Uint8Array): Uint8Array {
  nodeState.set(IV);
  // Block 1: 0x01, left[0..31], right[0..30].
  W[0] = (0x01 << 24) | (left[0]! << 16) | (left[1]! << 8) | left[2]!;
  for (let t = 1; t < 8; t++) {
    const i = 4 * t - 1;
    W[t] = (left[i]! << 24) | (left[i + 1]! << 16) | (left[i + 2]! << 8) | left[i + 3]!;
  }
  W[8] = (left[31]! << 24) | (right[0]! << 16) | (right[1]! << 8) | right[2]!;
  for (let t = 9; t < 16; t++) {
    const i = 4 * (t - 8) - 1;
    W[t] = (right[i]! << 24) | (right[i + 1]! << 16) | (right[i + 2]! << 8) | right[i + 3]!;
  }
  compressW(nodeState);
  // Block 2: right[31], the 0x80 terminator, zeros, and the length (65 bytes = 520 bits).
  W[0] = (right[31]! << 24) | (0x80 << 16);
  for (let t = 1; t < 15; t++) W[t] = 0;
  W[15] = 520;
  compressW(nodeState);
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const v = nodeState[i]!;
    out[4 * i] = v >>> 24;
    out[4 * i + 1] = (v >>> 16) & 255;
    out[4 * i + 2] = (v >>> 8) & 255;
    out[4 * i + 3] = v & 255;
  }
  return out;
}
