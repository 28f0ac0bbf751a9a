/**
 * Every error the API answers with, with its status, worded exactly as Toxiproxy's
 * api.go words them: clients and scripts written against Toxiproxy match on these.
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export const ErrBadRequestBody = new ApiError('bad request body', 400);
export const ErrMissingField = new ApiError('missing required field', 400);
export const ErrProxyNotFound = new ApiError('proxy not found', 404);
export const ErrProxyAlreadyExists = new ApiError('proxy already exists', 409);
export const ErrInvalidStream = new ApiError('stream was invalid, can be either upstream or downstream', 400);
export const ErrInvalidToxicType = new ApiError('invalid toxic type', 400);
export const ErrToxicAlreadyExists = new ApiError('toxic already exists', 409);
export const ErrToxicNotFound = new ApiError('toxic not found', 404);

/** Toxiproxy's joinError: "<wrapper>: <detail>" with the wrapper's status. */
export function joinError(detail: string, wrapper: ApiError): ApiError {
  return new ApiError(`${wrapper.message}: ${detail}`, wrapper.status);
}

/** Not an ApiError (a listen failure…): Toxiproxy answers 500 with the error's text. */
export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError((err as Error)?.message ?? String(err), 500);
}
