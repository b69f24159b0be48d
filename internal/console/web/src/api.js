// Calls to the node's faces with the signed-in key: REST (/admin, /api, /v1), GraphQL over POST, and the errors
// each answers in its own shape turned into one ApiError a page can show.

const KEY = 'contrail.key';

export const savedKey = () => sessionStorage.getItem(KEY) || '';
export const saveKey = (key) => sessionStorage.setItem(KEY, key);
export const forgetKey = () => sessionStorage.removeItem(KEY);

// ApiError is a refused or failed call: the HTTP status, the face's code, and its message.
export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code || '';
    this.field = field || '';
  }
}

// explain says what went wrong in a sentence, with what to do about it where the platform can tell.
export function explain(err) {
  if (!(err instanceof ApiError)) {
    return `Could not reach the node (${err.message}). Is \`contrail serve\` still running?`;
  }
  switch (err.status) {
    case 401:
      return `The node refused the key: ${err.message}. Sign out and sign in with a valid key.`;
    case 403:
      return `Not allowed with this key: ${err.message}`;
    case 429:
      return `Slow down: ${err.message}`;
  }
  return err.field ? `${err.message} (field ${err.field})` : err.message;
}

async function send(key, method, path, body, headers = {}) {
  const h = { ...headers };
  if (key) h.Authorization = 'Bearer ' + key;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new Error(e.message || String(e));
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  return { res, data, text };
}

// rest calls a REST endpoint and returns its JSON. Contrail's faces answer {"error":{"code","message","field"}};
// /v1 answers OpenAI's {"error":{"type","message","param","code"}}.
export async function rest(key, method, path, body) {
  const { res, data, text } = await send(key, method, path, body);
  if (!res.ok) {
    const e = (data && data.error) || {};
    throw new ApiError(res.status, e.code || e.type, e.message || text || res.statusText, e.field || e.param);
  }
  return data;
}

// gqlStatus is the HTTP status a GraphQL error's code stands for (errors inside a 200 answer).
const gqlStatus = { UNAUTHENTICATED: 401, FORBIDDEN: 403, NOT_FOUND: 404, RATE_LIMITED: 429, INTERNAL_SERVER_ERROR: 500 };

// gql runs a query or mutation and returns its data; GraphQL errors become an ApiError with extensions.code.
export async function gql(key, query, variables = {}) {
  return (await gqlFull(key, query, variables)).data;
}

// gqlFull is gql returning also the response's extensions, where the node puts warnings about a mutation that
// stands (an agent registered while its URL did not answer).
export async function gqlFull(key, query, variables = {}) {
  const { res, data, text } = await send(key, 'POST', '/graphql', { query, variables });
  const errors = (data && data.errors) || [];
  if (!res.ok || errors.length) {
    const first = errors[0] || {};
    const ext = first.extensions || {};
    const message = errors.length ? errors.map((e) => e.message).join('; ') : text || res.statusText;
    const status = res.status !== 200 ? res.status : gqlStatus[ext.code] || 400;
    throw new ApiError(status, ext.code, message, ext.field);
  }
  return { data: data.data, extensions: data.extensions || {} };
}

// health reads the node's open liveness and readiness endpoints.
export async function health() {
  const ready = await send('', 'GET', '/readyz');
  return { ready: ready.res.ok, status: ready.data || { status: ready.text } };
}
