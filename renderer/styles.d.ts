// esbuild bundles the stylesheet that main.tsx imports for its side effect; the import has no value.
declare module '*.css';
