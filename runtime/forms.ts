/**
 * The two encodings of lengths and counts, named so that a call in generated
 * code says which it uses: `r.string(COMPACT)` (unsigned varint of length + 1,
 * flexible versions) or `r.string(CLASSIC)` (int16 or int32 length).
 */
export const COMPACT = true;
export const CLASSIC = false;
