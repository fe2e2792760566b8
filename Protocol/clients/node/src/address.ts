// Where a node listens: a TCP host and port, or a Unix socket path.

/** A node's address: `"host:port"`, `"[::1]:port"`, a Unix socket path (`"/run/entitled.sock"`), or an object. */
export type NodeAddress = string | { host: string; port: number } | { path: string };

/** A parsed address. */
export type Address = { kind: 'tcp'; host: string; port: number; text: string } | { kind: 'unix'; path: string; text: string };

/** The default port of `entitled`. */
export const DEFAULT_PORT = 7117;

/** Parses one node's address; a string with a `/` and no port is a Unix socket path. */
export function parseAddress(node: NodeAddress): Address {
  if (typeof node !== 'string') {
    if ('path' in node) return { kind: 'unix', path: node.path, text: node.path };
    return tcp(node.host, node.port);
  }
  if (node.includes('/')) return { kind: 'unix', path: node, text: node };
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(node);
  if (bracketed) return tcp(bracketed[1], bracketed[2] === undefined ? DEFAULT_PORT : Number(bracketed[2]));
  const colon = node.lastIndexOf(':');
  if (colon < 0) return tcp(node, DEFAULT_PORT);
  if (node.indexOf(':') !== colon) return tcp(node, DEFAULT_PORT); // a bare IPv6 address
  return tcp(node.slice(0, colon), Number(node.slice(colon + 1)));
}

function tcp(host: string, port: number): Address {
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new TypeError(`not a node address: ${JSON.stringify(host)} port ${port} (write "host:port" or a socket path)`);
  }
  const text = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return { kind: 'tcp', host, port, text };
}
