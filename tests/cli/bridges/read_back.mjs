// Reads back a Zarr array `b2nd export` wrote, with zarrita (an independent implementation of
// Zarr v2 and v3, sharding included), and checks it.
//
//   node read_back.mjs DIR EXPECT.npy CHUNKS INNER ATTRS_JSON
//
// CHUNKS: "a,b" the chunk (v3: shard) shape; INNER: the inner chunk shape ("" for v2). Prints
// "ok"; exit 1 with the reason on stderr on a mismatch, 77 when zarrita is not installed.
import { execSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

function fail(why) {
  console.error(why);
  process.exit(1);
}

async function load(name) {
  try {
    const root = execSync("npm root -g", { encoding: "utf8" }).trim();
    return await import(pathToFileURL(`${root}/${name}/dist/src/index.js`).href);
  } catch (e) {
    process.exit(77);
  }
}

// A version 1.0 .npy in C order: its shape and payload bytes.
function readNpy(path) {
  const b = readFileSync(path);
  const len = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + len).toString("latin1");
  const m = /'shape': \(([^)]*)\)/.exec(header);
  const shape = m[1].split(",").map((s) => s.trim()).filter((s) => s).map(Number);
  return { shape, data: b.subarray(10 + len) };
}

const [dir, expect, chunks, inner, attrs] = process.argv.slice(2);
const zarr = await load("zarrita");
const { default: FileSystemStore } = await load("@zarrita/storage").then((m) => ({
  default: m.FileSystemStore,
}));
const store = new FileSystemStore(dir);
const arr = await zarr.open(zarr.root(store), { kind: "array" });
const want = readNpy(expect);
if (JSON.stringify(arr.shape) !== JSON.stringify(want.shape)) {
  fail(`shape ${arr.shape}, expected ${want.shape}`);
}
const got = await zarr.get(arr);
const bytes = Buffer.from(got.data.buffer, got.data.byteOffset, got.data.byteLength);
// zarrita gives bool arrays as one byte per item too; big-endian data in this machine's order.
const meta = JSON.parse(readFileSync(`${dir}/zarr.json`, "utf8"));
let expected = Buffer.from(want.data);
const big = JSON.stringify(meta.codecs).includes('"endian":"big"');
if (big) {
  const size = got.data.BYTES_PER_ELEMENT;
  expected = Buffer.from(expected);
  for (let i = 0; i < expected.length; i += size) {
    expected.subarray(i, i + size).reverse();
  }
}
if (!bytes.equals(expected)) {
  fail("values differ");
}
const shape = (text) => JSON.stringify(text.split(",").map(Number));
const grid = JSON.stringify(meta.chunk_grid.configuration.chunk_shape);
if (chunks && grid !== shape(chunks)) {
  fail(`chunks ${grid}, expected ${chunks}`);
}
if (inner) {
  const sharding = meta.codecs.find((c) => c.name === "sharding_indexed");
  if (!sharding) {
    fail("not sharded");
  }
  // zarrita reads by inner chunks: the shape it reports.
  if (JSON.stringify(arr.chunks) !== shape(inner)) {
    fail(`inner chunks ${arr.chunks}, expected ${inner}`);
  }
}
for (const [k, v] of Object.entries(JSON.parse(attrs))) {
  if (JSON.stringify(arr.attrs[k]) !== JSON.stringify(v)) {
    fail(`attribute ${k} is ${JSON.stringify(arr.attrs[k])}, expected ${JSON.stringify(v)}`);
  }
}
console.log("ok");
