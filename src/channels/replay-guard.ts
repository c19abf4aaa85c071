// A signed webhook request is good for the platform's whole timestamp window (five minutes):
// anyone who captured one could send it again inside that window and have it taken twice.
// Each signature that verified is kept until its timestamp leaves the window, so a second
// arrival is refused; anything older is refused by the window check anyway. Only verified
// signatures are kept, so the memory is bounded by what the platform itself sends in the
// window. Pure: the caller says what time it is.

export class SeenSignatures {
  /** Signature → its request's timestamp (seconds), in the order they arrived. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly windowSeconds: number) {}

  /** True the first time a signature arrives (it is remembered), false for a replay. */
  firstTime(signature: string, timestampSeconds: number, nowSeconds: number): boolean {
    this.forget(nowSeconds);
    if (this.seen.has(signature)) return false;
    this.seen.set(signature, timestampSeconds);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  /**
   * Drops the oldest arrivals whose timestamps left the window. It stops at the first one still
   * inside it: timestamps arrive almost in order, and keeping a stale one a little longer is
   * harmless, while dropping a live one would let its replay through.
   */
  private forget(nowSeconds: number): void {
    for (const [signature, timestamp] of this.seen) {
      if (nowSeconds - timestamp <= this.windowSeconds) return;
      this.seen.delete(signature);
    }
  }
}
