// A client of GraphQL subscriptions over one websocket, in the graphql-transport-ws protocol: connection_init
// carries the key (a browser cannot set headers on a websocket), then any number of subscriptions share the
// socket. The node pings; we answer pong.

export class Subscriptions {
  constructor(key, onClosed) {
    this.key = key;
    this.onClosed = onClosed || (() => {});
    this.next = 1;
    this.subs = new Map();
    this.closedByUs = false;
    this.ready = this.open();
  }

  open() {
    return new Promise((resolve, reject) => {
      const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/graphql';
      const ws = new WebSocket(url, 'graphql-transport-ws');
      this.ws = ws;
      let acked = false;
      ws.onopen = () => ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: 'Bearer ' + this.key } }));
      ws.onmessage = (ev) => {
        let m;
        try {
          m = JSON.parse(ev.data);
        } catch {
          return;
        }
        switch (m.type) {
          case 'connection_ack':
            acked = true;
            resolve(this);
            break;
          case 'ping':
            ws.send(JSON.stringify({ type: 'pong' }));
            break;
          case 'next': {
            const s = this.subs.get(m.id);
            if (s && m.payload && m.payload.errors && m.payload.errors.length) {
              s.error(m.payload.errors.map((e) => e.message).join('; '));
            } else if (s && m.payload) {
              s.next(m.payload.data);
            }
            break;
          }
          case 'error': {
            const s = this.subs.get(m.id);
            this.subs.delete(m.id);
            if (s) s.error((m.payload || []).map((e) => e.message).join('; ') || 'subscription refused');
            break;
          }
          case 'complete': {
            const s = this.subs.get(m.id);
            this.subs.delete(m.id);
            if (s && s.complete) s.complete();
            break;
          }
        }
      };
      ws.onclose = (ev) => {
        const reason = ev.reason || `the connection closed (code ${ev.code})`;
        if (!acked) {
          reject(new Error(reason));
          return;
        }
        for (const s of this.subs.values()) s.error('lost the live connection to the node: ' + reason);
        this.subs.clear();
        if (!this.closedByUs) this.onClosed(reason);
      };
    });
  }

  // subscribe starts a subscription; handlers are {next(data), error(message), complete()}. It returns a function
  // that stops it.
  subscribe(query, variables, handlers) {
    const id = String(this.next++);
    let stopped = false;
    this.ready.then(
      () => {
        if (stopped) return;
        this.subs.set(id, handlers);
        this.ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } }));
      },
      (err) => handlers.error(err.message),
    );
    return () => {
      stopped = true;
      if (this.subs.delete(id) && this.ws.readyState === WebSocket.OPEN) {
        this.ws.send(JSON.stringify({ id, type: 'complete' }));
      }
    };
  }

  close() {
    this.closedByUs = true;
    this.ws.close(1000, 'bye');
  }
}
