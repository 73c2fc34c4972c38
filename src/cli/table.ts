/** `rows` as text columns, each as wide as its widest cell and two spaces apart, one line a
 * row (no trailing spaces). */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd())
    .join("\n") + "\n";
}
