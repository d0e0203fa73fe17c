// A client in a third language: Node.js, with @grpc/grpc-js and @grpc/proto-loader, starts a
// real tensord, opens a session, transposes a tensor and reads its strides and data.
//
//   node transpose_test.js <path to the tensord binary> <path to the proto folder>
'use strict';

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const [tensordBinary, protoDir] = process.argv.slice(2);
if (!tensordBinary || !protoDir) {
  console.error('usage: node transpose_test.js TENSORD_BINARY PROTO_DIR');
  process.exit(2);
}

function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(tensordBinary, ['--listen=127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/listening on [^:]+:(\d+)/);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`tensord exited with ${code}`)));
  });
}

// Every call of a session carries its id's public part in the `tensord-route` header (for a
// router in front of many servers).
function routed(route) {
  const metadata = new grpc.Metadata();
  if (route) metadata.set('tensord-route', route);
  return metadata;
}

function call(client, method, request, route) {
  return new Promise((resolve, reject) => {
    client[method](request, routed(route), (err, response) => (err ? reject(err) : resolve(response)));
  });
}

function download(client, request, route) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let header = null;
    const stream = client.Download(request, routed(route));
    stream.on('data', (message) => {
      if (message.header) header = message.header;
      if (message.data) chunks.push(message.data);
    });
    stream.on('error', reject);
    stream.on('end', () => resolve({ header, data: Buffer.concat(chunks) }));
  });
}

async function main() {
  const definition = protoLoader.loadSync(path.join(protoDir, 'tensord/v1/tensord.proto'), {
    includeDirs: [protoDir],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const { tensord } = grpc.loadPackageDefinition(definition);
  const { child, port } = await startServer();
  try {
    const client = new tensord.v1.Tensord(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const version = await call(client, 'GetVersion', {});
    assert.equal(version.api_version, 'v1');

    const { session_id, route } = await call(client, 'OpenSession', { device: 'cpu', client_name: 'node test' });
    assert.match(session_id, /^[A-Za-z0-9._-]+\/[0-9]+\/[0-9a-f]{32}$/);
    assert.equal(route, session_id.slice(0, session_id.lastIndexOf('/')));

    // t = torch.arange(6.).view(2, 3); u = t.transpose(0, 1)
    const ran = await call(client, 'RunOps', {
      session_id,
      ops: [
        { op: 'arange', attrs: { end: { f: 6.0 } }, outputs: [1] },
        { op: 'view', inputs: [1], attrs: { shape: { ints: { values: [2, 3] } } }, outputs: [2] },
        { op: 'transpose', inputs: [2], attrs: { dim0: { i: 0 }, dim1: { i: 1 } }, outputs: [3] },
      ],
    }, route);
    assert.equal(ran.error, null, JSON.stringify(ran.error));
    const u = ran.results[2].outputs[0];
    assert.deepEqual(u.sizes, [3, 2]);
    assert.deepEqual(u.strides, [1, 3]);
    assert.equal(u.is_contiguous, false);
    assert.equal(u.dtype, 'DTYPE_FLOAT32');
    assert.equal(u.storage_id, ran.results[0].outputs[0].storage_id);  // a view: same storage

    const { header, data } = await download(client, { session_id, id: 3 }, route);
    assert.deepEqual(header.strides, [1, 3]);
    const values = Array.from(new Float32Array(data.buffer, data.byteOffset, data.length / 4));
    assert.deepEqual(values, [0, 3, 1, 4, 2, 5]);

    // An error comes back with the op's index and PyTorch's exception class.
    const bad = await call(client, 'RunOps', {
      session_id,
      ops: [{ op: 'transpose', inputs: [2], attrs: { dim0: { i: 0 }, dim1: { i: 7 } }, outputs: [4] }],
    }, route);
    assert.equal(bad.error.kind, 'IndexError');
    assert.equal(bad.error.op_index, 0);

    await call(client, 'CloseSession', { session_id }, route);
    client.close();
    console.log('node client: transpose strides [1, 3], data [0, 3, 1, 4, 2, 5]: ok');
  } finally {
    child.kill('SIGTERM');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
