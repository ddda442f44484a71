/**
 * The fields of the events AWS sends to an HTTP function that walletgate reads, and the results it
 * answers with — declared here so that the published types need no `@types/aws-lambda`. Field names
 * and nesting are AWS's; the documents they come from are linked on each type.
 */

/** Header or query values keyed by name, as API Gateway and ALB send them. */
export type SingleValues = Readonly<Record<string, string | undefined>>

/** Repeated header or query values keyed by name, as API Gateway and ALB send them. */
export type MultiValues = Readonly<Record<string, ReadonlyArray<string> | undefined>>

/**
 * API Gateway REST API, Lambda proxy integration, payload format 1.0
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html).
 */
export interface RestApiEvent {
  readonly httpMethod: string
  /** The resource path: without the stage on the execute-api endpoint, with the base path on a custom domain. */
  readonly path: string
  readonly headers?: SingleValues | null | undefined
  readonly multiValueHeaders?: MultiValues | null | undefined
  /** Values already percent-decoded by API Gateway. */
  readonly queryStringParameters?: SingleValues | null | undefined
  readonly multiValueQueryStringParameters?: MultiValues | null | undefined
  readonly body?: string | null | undefined
  readonly isBase64Encoded?: boolean | undefined
  readonly requestContext: {
    readonly stage?: string | undefined
    readonly identity?: { readonly sourceIp?: string | undefined } | null | undefined
  }
}

/**
 * API Gateway HTTP API, payload format 2.0, and Lambda function URLs, which send the same shape
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html,
 * https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html).
 */
export interface HttpApiEvent {
  readonly version: string
  /** The path, with `/{stage}` first when the stage is not `$default`. */
  readonly rawPath: string
  readonly rawQueryString?: string | undefined
  /** The request's cookies, which API Gateway moves out of `headers`. */
  readonly cookies?: ReadonlyArray<string> | null | undefined
  /** Lower-case names; repeated headers already joined with commas. */
  readonly headers?: SingleValues | null | undefined
  readonly body?: string | null | undefined
  readonly isBase64Encoded?: boolean | undefined
  readonly requestContext: {
    readonly stage?: string | undefined
    readonly http: { readonly method: string; readonly sourceIp?: string | undefined }
  }
}

/**
 * Application Load Balancer, Lambda target group; `multiValueHeaders` and
 * `multiValueQueryStringParameters` replace the single-value fields when the target group has
 * multi-value headers on (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/lambda-functions.html).
 */
export interface AlbEvent {
  readonly httpMethod: string
  readonly path: string
  readonly headers?: SingleValues | null | undefined
  readonly multiValueHeaders?: MultiValues | null | undefined
  /** Values as the client sent them: ALB does not percent-decode them. */
  readonly queryStringParameters?: SingleValues | null | undefined
  readonly multiValueQueryStringParameters?: MultiValues | null | undefined
  readonly body?: string | null | undefined
  readonly isBase64Encoded?: boolean | undefined
  readonly requestContext: { readonly elb: { readonly targetGroupArn?: string | undefined } }
}

/** Any HTTP event walletgate answers. */
export type LambdaHttpEvent = RestApiEvent | HttpApiEvent | AlbEvent

/**
 * A result in the shape the event's source expects: API Gateway REST (`multiValueHeaders`), HTTP
 * API and function URLs (`cookies`), or ALB (`statusDescription`, and `multiValueHeaders` instead of
 * `headers` when the event had them).
 */
export interface LambdaHttpResult {
  readonly statusCode: number
  /** ALB only: the status line's text, such as `"200 OK"`. */
  readonly statusDescription?: string
  readonly headers?: Readonly<Record<string, string>>
  readonly multiValueHeaders?: Readonly<Record<string, Array<string>>>
  /** HTTP API and function URLs only: the `Set-Cookie` values. */
  readonly cookies?: Array<string>
  readonly body: string
  readonly isBase64Encoded: boolean
}

/** The part of the Lambda context walletgate reads. */
export interface LambdaContext {
  readonly awsRequestId?: string | undefined
}
