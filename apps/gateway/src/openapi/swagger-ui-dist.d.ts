/** swagger-ui-dist ships no types for its path helper. */
declare module 'swagger-ui-dist/absolute-path.js' {
  /** The directory swagger-ui-dist is installed in. */
  const getAbsoluteFSPath: () => string;
  export default getAbsoluteFSPath;
}
