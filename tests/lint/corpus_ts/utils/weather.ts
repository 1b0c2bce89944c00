// A tool's remote call: journaled where the agents call it (inside ctx.run).
export async function fetchWeather(city: string): Promise<{ temperature: number; description: string }> {
  const response = await fetch(`https://weather.example.com/v1/current?city=${encodeURIComponent(city)}`);
  if (!response.ok) throw new Error(`weather answered ${response.status}`);
  return (await response.json()) as { temperature: number; description: string };
}

export function toolResult(toolCallId: string, toolName: string, output: unknown) {
  return {
    role: "tool" as const,
    content: [{ type: "tool-result" as const, toolCallId, toolName, output: { type: "json" as const, value: output as any } }],
  };
}
