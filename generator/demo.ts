export async function runDemo(): Promise<void> {
  console.log('demo: not yet');
}
