// Key-value backends for the component's `wasi:keyvalue/store` (the schema registry, settings
// overrides and the schema builder's cache live there). A backend is synchronous because the
// component calls it synchronously: { get(key) -> Uint8Array | undefined, set(key, bytes), delete(key),
// keys() -> iterable of every key } (the registry lists its schemas by their keys).

/** Entries in a Map: gone when the process ends. The default in Node. */
export function memoryKeyValue(map = new Map()) {
  return {
    get: (key) => map.get(key),
    set: (key, value) => void map.set(key, Uint8Array.from(value)),
    delete: (key) => void map.delete(key),
    keys: () => map.keys(),
  };
}

/**
 * Entries in the browser's localStorage under `prefix` (values base64-encoded): they survive a
 * reload. The default in browsers.
 */
export function localStorageKeyValue({ prefix = 'structure:', storage = globalThis.localStorage } = {}) {
  if (!storage) {
    throw new TypeError('localStorageKeyValue: no localStorage here; pass { storage } or use memoryKeyValue()');
  }
  return {
    get(key) {
      const text = storage.getItem(prefix + key);
      return text === null ? undefined : Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
    },
    set(key, value) {
      let binary = '';
      for (const byte of value) binary += String.fromCharCode(byte);
      storage.setItem(prefix + key, btoa(binary));
    },
    delete: (key) => storage.removeItem(prefix + key),
    *keys() {
      for (let index = 0; index < storage.length; index += 1) {
        const key = storage.key(index);
        if (key?.startsWith(prefix)) yield key.slice(prefix.length);
      }
    },
  };
}
