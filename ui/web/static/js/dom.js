// DOM building without HTML strings: every value becomes a text node or an
// attribute, so stored content can never turn into markup or script.

const SVG_NS = 'http://www.w3.org/2000/svg';

// h builds an HTML element. props: attributes by name, plus
//   testid → data-testid, field → data-field,
//   on<event> (a function) → an event listener.
// null, undefined and false props are left out; true sets an empty attribute.
export function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

// s builds an SVG element the same way.
export function s(tag, props, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

function build(el, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (key.startsWith('on')) {
      // Inline handlers and style attributes are refused by the CSP; a
      // string here is always a mistake.
      if (typeof value !== 'function') {
        throw new TypeError(`dom: ${key} must be a function`);
      }
      el.addEventListener(key.slice(2), value);
    } else if (key === 'style') {
      throw new TypeError('dom: use a class, not a style attribute');
    } else if (key === 'testid') {
      el.setAttribute('data-testid', value);
    } else if (key === 'field') {
      el.setAttribute('data-field', value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

// append adds children: nodes as they are, strings and numbers as text,
// arrays flattened; null, undefined and false are skipped.
export function append(el, ...children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    if (Array.isArray(child)) {
      append(el, ...child);
    } else if (child instanceof Node) {
      el.appendChild(child);
    } else {
      el.appendChild(document.createTextNode(String(child)));
    }
  }
  return el;
}

// replace puts children in place of everything el holds.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, ...children);
}
