/**
 * The run id rule of the HTTP surface (docs/http.md): what a URL path segment carries as it is.
 * @module
 */

/** The run id rule: 1–200 characters of `[A-Za-z0-9._:-]`. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9._:-]{1,200}$/;
