/** The primitive types with a fixed encoded width, whose arrays are written in one loop (Writer.fixedArray). */
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

export type FixedWidthType = keyof FixedWidthValue;
