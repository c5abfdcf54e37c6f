// Client-side routing on location.pathname: every page is a real URL (the
// server answers each with index.html), so reload and permalinks work.

let render = () => {};
let rendered = '';

// start installs the render function and the history and link handlers.
export function start(renderPage) {
  render = renderPage;
  window.addEventListener('popstate', () => {
    // Following an in-page anchor (#call-…) also fires popstate; the page
    // itself did not change then, so leave it (and its scroll) alone.
    if (here() !== rendered) {
      show();
    }
  });
  document.addEventListener('click', onClick);
  show();
}

function here() {
  return location.pathname + location.search;
}

function show() {
  rendered = here();
  render();
}

// navigate goes to a path of this app: a new history entry, or in place of
// the current one with replace.
export function navigate(url, options) {
  if (options && options.replace) {
    history.replaceState(null, '', url);
  } else {
    history.pushState(null, '', url);
  }
  show();
}

// Links to app pages navigate without reloading; downloads, API paths,
// other origins, new-tab clicks and in-page anchors are left to the browser.
function onClick(e) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) {
    return;
  }
  const a = e.target instanceof Element ? e.target.closest('a') : null;
  const target = a ? a.getAttribute('target') : null;
  if (!a || a.hasAttribute('download') || (target && target !== '_self')) {
    return;
  }
  const href = a.getAttribute('href') || '';
  if (!href.startsWith('/') || href.startsWith('//') || href.startsWith('/api/') || href.startsWith('/assets/')) {
    return;
  }
  e.preventDefault();
  navigate(href);
}
