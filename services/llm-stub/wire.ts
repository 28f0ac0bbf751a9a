/**
 * OpenAI's wire formats, as recorded in shared/research/llm-stub.md §4 (a real
 * gpt-4o-mini capture with include_usage; error bodies as OpenAI sends them).
 * Stream frames are built as strings around a per-request envelope, so a token costs
 * one small concatenation and no JSON.stringify of a whole object.
 */

export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly prompt_tokens_details: { readonly cached_tokens: number };
  readonly completion_tokens_details: { readonly reasoning_tokens: number };
}

export function usage(prompt: number, completion: number): Usage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

export interface Envelope {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly systemFingerprint: string;
  /** stream_options.include_usage: every chunk then carries "usage" (null but on the last). */
  readonly includeUsage: boolean;
}

/** The SSE frames of one streamed answer. */
export class ChunkWriter {
  private readonly head: string;
  private readonly tail: string;

  readonly includesUsage: boolean;

  constructor(env: Envelope) {
    this.includesUsage = env.includeUsage;
    this.head =
      `data: {"id":${JSON.stringify(env.id)},"object":"chat.completion.chunk","created":${env.created},` +
      `"model":${JSON.stringify(env.model)},"system_fingerprint":${JSON.stringify(env.systemFingerprint)},"choices":[`;
    this.tail = env.includeUsage ? '],"usage":null}\n\n' : ']}\n\n';
  }

  role(): string {
    return `${this.head}{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}${this.tail}`;
  }

  /** `json` is the token's text already JSON-encoded. */
  content(json: string): string {
    return `${this.head}{"index":0,"delta":{"content":${json}},"logprobs":null,"finish_reason":null}${this.tail}`;
  }

  finish(reason: 'stop' | 'length'): string {
    return `${this.head}{"index":0,"delta":{},"logprobs":null,"finish_reason":"${reason}"}${this.tail}`;
  }

  /** The usage chunk (only with include_usage): empty choices, before [DONE]. */
  usage(u: Usage): string {
    return `${this.head}],"usage":${JSON.stringify(u)}}\n\n`;
  }

  static readonly DONE = 'data: [DONE]\n\n';
}

export function completion(
  env: Omit<Envelope, 'includeUsage'>,
  content: string,
  finishReason: 'stop' | 'length',
  u: Usage,
): object {
  return {
    id: env.id,
    object: 'chat.completion',
    created: env.created,
    model: env.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    usage: u,
    system_fingerprint: env.systemFingerprint,
  };
}

export interface ApiErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: string;
    readonly param: string | null;
    readonly code: string | null;
  };
}

const err = (message: string, type: string, param: string | null, code: string | null): ApiErrorBody => ({
  error: { message, type, param, code },
});

export const errors = {
  contextLength: (window: number, prompt: number, completion: number | undefined): ApiErrorBody =>
    err(
      completion === undefined
        ? `This model's maximum context length is ${window} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`
        : `This model's maximum context length is ${window} tokens. However, you requested ${prompt + completion} tokens (${prompt} in the messages, ${completion} in the completion). Please reduce the length of the messages or completion.`,
      'invalid_request_error',
      'messages',
      'context_length_exceeded',
    ),
  rateLimit: (
    model: string,
    kind: 'requests' | 'tokens',
    limit: number,
    used: number,
    requested: number,
    retryIn: string,
  ): ApiErrorBody =>
    err(
      `Rate limit reached for ${model} in organization org-metabench on ${kind === 'tokens' ? 'tokens per min (TPM)' : 'requests per min (RPM)'}: Limit ${limit}, Used ${used}, Requested ${requested}. Please try again in ${retryIn}. Visit https://platform.openai.com/account/rate-limits to learn more.`,
      kind,
      null,
      'rate_limit_exceeded',
    ),
  server: (): ApiErrorBody =>
    err(
      'The server had an error while processing your request. Sorry about that!',
      'server_error',
      null,
      null,
    ),
  // Not in the research note's captures: OpenAI's 503 wording as users have reported it.
  unavailable: (): ApiErrorBody =>
    err('The server is overloaded or not ready yet.', 'server_error', null, null),
  invalidJson: (): ApiErrorBody =>
    err(
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
      'invalid_request_error',
      null,
      null,
    ),
  missing: (param: string): ApiErrorBody =>
    err(
      `Missing required parameter: '${param}'.`,
      'invalid_request_error',
      param,
      'missing_required_parameter',
    ),
  invalid: (param: string, message: string): ApiErrorBody =>
    err(message, 'invalid_request_error', param, null),
  notFound: (method: string, path: string): ApiErrorBody =>
    err(`Invalid URL (${method} ${path})`, 'invalid_request_error', null, null),
};

/** An OpenAI duration string for rate-limit reset headers and messages: 84ms, 6.5s, 1m2s. */
export function resetString(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = ms / 1000;
  if (s < 60) return `${Number(s.toFixed(3))}s`;
  return `${Math.floor(s / 60)}m${Number((s % 60).toFixed(3))}s`;
}

/** Embeddings: float32 little-endian, base64 (what openai-node asks for by default). */
export function toBase64(v: Float32Array): string {
  const b = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) b.writeFloatLE(v[i]!, i * 4);
  return b.toString('base64');
}
