/** The primitive types with a fixed encoded width, which arrays read and write in one loop. */
export const FIXED_WIDTH = {
  bool: 1,
  int8: 1,
  int16: 2,
  uint16: 2,
  int32: 4,
  uint32: 4,
  int64: 8,
  float64: 8,
  uuid: 16,
} as const;

export type FixedWidthType = keyof typeof FIXED_WIDTH;

export interface FixedWidthValue {
  bool: boolean;
  int8: number;
  int16: number;
  uint16: number;
  int32: number;
  uint32: number;
  int64: bigint;
  float64: number;
  uuid: string;
}
