// Node clients of idkitd, as docs/service.md shows them: @grpc/grpc-js with @grpc/proto-loader
// (longs: String), Connect-ES 2 (64-bit fields as BigInt) and plain fetch(). Each asks for N IDs,
// checks that they are distinct, that the number it holds for each ID is the server's own text of
// it, and that idkitd's Decode gives that text back; then grpc-js with longs: Number shows what a
// JavaScript number does to 64-bit IDs. TestNodeClients (../../node_test.go) runs it and checks
// the JSON line it prints for each client:
//
//   node clients.mjs --config config.json
//
// config.json: {"url": "http://127.0.0.1:PORT", "grpc": ["127.0.0.1:PORT", …], "proto":
// "…/idkit.proto", "descriptors": "…/idkit.binpb", "generator": "orders", "n": 300,
// "rounding_n": 1000}
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

const args = process.argv.slice(2);
if (args.length !== 2 || args[0] !== "--config") {
  console.error("usage: node clients.mjs --config FILE");
  process.exit(2);
}
const cfg = JSON.parse(readFileSync(args[1], "utf8"));

// check collects what one client found: the IDs it holds as text, and every problem.
function check(client, ids, text, decoded) {
  const problems = [];
  if (ids.length !== cfg.n) problems.push(`got ${ids.length} IDs, want ${cfg.n}`);
  if (new Set(ids).size !== ids.length) problems.push(`${ids.length - new Set(ids).size} repeated IDs`);
  ids.forEach((id, i) => {
    if (text && id !== text[i]) problems.push(`ID ${i}: holds ${id}, the server's text is ${text[i]}`);
    if (decoded[i] !== id) problems.push(`ID ${i}: holds ${id}, Decode says ${decoded[i]}`);
  });
  return { client, n: ids.length, distinct: new Set(ids).size, ids, problems: problems.slice(0, 5) };
}

// grpc-js with the .proto loaded at run time, 64-bit fields as decimal strings.
function grpcJsClient(addr, longs) {
  const def = protoLoader.loadSync(cfg.proto, { longs, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def);
  return new pkg.idkit.v1.IDService(addr, grpc.credentials.createInsecure());
}

function call(client, method, req) {
  return new Promise((resolve, reject) =>
    client[method](req, { deadline: Date.now() + 10_000 }, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

async function grpcJs(addr) {
  const c = grpcJsClient(addr, String);
  try {
    const res = await call(c, "Next", { generator: cfg.generator, count: cfg.n, text: true });
    const ids = res.ids64; // strings: "2006659158635446272"
    const decoded = await Promise.all(ids.map(async (id) => (await call(c, "Decode", { generator: cfg.generator, id })).text));
    return check(`grpc-js ${addr}`, ids, res.text, decoded);
  } finally {
    c.close();
  }
}

// Connect-ES 2 with the service's descriptors read at run time (generated code works the same):
// fixed64 fields arrive as BigInt.
async function connectEs(kind) {
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(cfg.descriptors));
  const service = createFileRegistry(set).getService("idkit.v1.IDService");
  const transport =
    kind === "grpc"
      ? createGrpcTransport({ baseUrl: cfg.url, httpVersion: "2" })
      : createConnectTransport({ baseUrl: cfg.url, httpVersion: "1.1" });
  const c = createClient(service, transport);
  const res = await c.next({ generator: cfg.generator, count: cfg.n, text: true });
  if (res.ids64.some((v) => typeof v !== "bigint")) throw new Error("Connect-ES gave ids64 that are not BigInt");
  const ids = res.ids64.map((v) => v.toString());
  const decoded = await Promise.all(ids.map(async (id) => (await c.decode({ generator: cfg.generator, id })).text));
  return check(`connect-es ${kind}`, ids, res.text, decoded);
}

// Plain fetch(): the text lines of GET /v1/next, and the Connect protocol's JSON with text: true.
async function fetchPlain() {
  const res = await fetch(`${cfg.url}/v1/next/${cfg.generator}?n=${cfg.n}`);
  if (!res.ok) throw new Error(`GET /v1/next: ${res.status} ${await res.text()}`);
  const ids = (await res.text()).trim().split("\n");
  const decoded = await Promise.all(
    ids.map(async (id) => {
      const r = await fetch(`${cfg.url}/v1/decode/${cfg.generator}/${encodeURIComponent(id)}`);
      if (!r.ok) throw new Error(`GET /v1/decode: ${r.status} ${await r.text()}`);
      return (await r.json()).text;
    }),
  );
  return check("fetch /v1/next", ids, null, decoded);
}

async function fetchConnectJSON() {
  const post = async (method, body) => {
    const r = await fetch(`${cfg.url}/idkit.v1.IDService/${method}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${method}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const res = await post("Next", { generator: cfg.generator, count: cfg.n, text: true });
  const ids = res.text; // ids64 are JSON strings too (proto3 JSON), but text is what an app shows
  const decoded = await Promise.all(ids.map(async (id) => (await post("Decode", { generator: cfg.generator, id })).text));
  return check("fetch connect-json", ids, res.ids64, decoded);
}

// rounding: what longs: Number (JavaScript numbers, 53 bits of precision) makes of 64-bit IDs.
async function rounding(addr) {
  const c = grpcJsClient(addr, Number);
  try {
    const res = await call(c, "Next", { generator: cfg.generator, count: cfg.rounding_n, text: true });
    const nums = res.ids64;
    // What the application shows or sends back (JSON.stringify, String, a URL) is the number's
    // shortest decimal; its exact value is another ID as well, except at multiples of the
    // number's precision step.
    const mismatched = nums.filter((v, i) => String(v) !== res.text[i]).length;
    const mismatchedValue = nums.filter((v, i) => BigInt(v) !== BigInt(res.text[i])).length;
    const i = Math.max(0, nums.findIndex((v, i) => BigInt(v) !== BigInt(res.text[i])));
    return {
      client: "grpc-js longs: Number",
      n: nums.length,
      distinct: new Set(nums).size,
      distinct_text: new Set(res.text).size,
      mismatched,
      mismatched_value: mismatchedValue,
      // Numbers from 2^60 to 2^61 (twitter-layout IDs of today) are 256 apart.
      multiples_of_256: nums.every((v) => BigInt(v) % 256n === 0n),
      example: { id: res.text[i], number: String(nums[i]) },
    };
  } finally {
    c.close();
  }
}

const runs = [
  ...cfg.grpc.map((addr) => () => grpcJs(addr)),
  () => connectEs("connect"),
  () => connectEs("grpc"),
  fetchPlain,
  fetchConnectJSON,
  () => rounding(cfg.grpc[0]),
];
let failed = false;
for (const run of runs) {
  try {
    console.log(JSON.stringify(await run()));
  } catch (err) {
    failed = true;
    console.log(JSON.stringify({ client: run.toString(), error: String(err?.stack ?? err) }));
  }
}
process.exit(failed ? 1 : 0);
