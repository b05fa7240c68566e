// HTTP server for the café demo.
import http from "node:http";
import { readFile } from "node:fs/promises";
const path = require("node:path");

/**
 * A tiny request router.
 */
export class Server {
  constructor(port) {
    this.port = port;
    this.routes = new Map();
  }

  // Register a handler for a path.
  route(path, handler) {
    this.routes.set(path, handler);
  }

  async handle(req, res) {
    const handler = this.routes.get(req.url);
    if (!handler) {
      res.statusCode = 404;
      return res.end("not found");
    }
    return handler(req, res);
  }
}

/** Format a greeting — with a naïve accent. */
export const greet = (name) => `héllo ${name}`;

function main() {
  const server = new Server(8080);
  server.route("/", async () => readFile(path.join(".", "index.html")));
}

main();
