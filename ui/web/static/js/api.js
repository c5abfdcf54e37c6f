// The JSON API client: same-origin fetch with the session cookie, the CSRF
// header on every state change, and errors as ApiError with the server's
// words ({"error": "…"}).

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

let csrfToken = '';

// useSession remembers the CSRF token of the current session.
export function useSession(session) {
  csrfToken = session && typeof session.csrf_token === 'string' ? session.csrf_token : '';
}

// query builds "?a=1&b=2" from the non-empty values of params.
export function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== '' && value !== null && value !== undefined) {
      q.set(key, String(value));
    }
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

// request sends body as JSON, or as it is when contentType names another type.
async function request(method, path, body, signal, contentType) {
  const headers = { Accept: 'application/json' };
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store', signal };
  if (method !== 'GET') {
    headers['Content-Type'] = contentType || 'application/json';
    if (csrfToken) {
      headers['X-CSRF-Token'] = csrfToken;
    }
    if (body !== undefined) {
      init.body = contentType ? body : JSON.stringify(body);
    }
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    if (e.name === 'AbortError') {
      throw e;
    }
    throw new ApiError(0, 'The server cannot be reached. Check the connection and try again.');
  }
  if (res.status === 204) {
    return null;
  }
  const text = await res.text();
  let data = null;
  let parsed = false;
  if (text !== '') {
    try {
      data = JSON.parse(text);
      parsed = true;
    } catch (e) {
      parsed = false;
    }
  }
  if (!res.ok) {
    const message = parsed && data && typeof data.error === 'string' && data.error !== '' ? data.error : `${res.status} ${res.statusText}`.trim();
    throw new ApiError(res.status, message);
  }
  if (!parsed) {
    throw new ApiError(res.status, `The server answered ${method} ${path.split('?')[0]} with something that is not JSON.`);
  }
  return data;
}

export function get(path, signal) {
  return request('GET', path, undefined, signal);
}

export function post(path, body, signal) {
  return request('POST', path, body, signal);
}

// postText sends text (a file's content) as contentType.
export function postText(path, text, contentType, signal) {
  return request('POST', path, text, signal, contentType);
}

export function del(path, signal) {
  return request('DELETE', path, undefined, signal);
}

// isAbort reports whether e only says a request was cancelled because the
// page moved on.
export function isAbort(e) {
  return e && e.name === 'AbortError';
}
