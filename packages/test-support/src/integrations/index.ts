/**
 * Fakes of the workflow's integrations, on 127.0.0.1: GitHub's REST API
 * checked against its published OpenAPI description, GitHub's device-flow
 * authorization server, Linear's GraphQL API and Plane's REST API v1 (typed
 * with their SDKs). A subpath of its own, so tests that need none of them
 * load neither the description nor graphql.
 */
export { type FakeApp, type FakeGitHub, type FakeGitHubOptions, fakeGitHub } from './fakeGitHub.js';
export { type FakeOAuthServer, fakeGitHubOAuth } from './fakeGitHubOAuth.js';
export { type FakeLinear, fakeLinear } from './fakeLinear.js';
export { type FakePlane, fakePlane } from './fakePlane.js';
export { checkRequest, checkResponse, exampleOf, exampleOfComponent, exampleResponse, type Operation, operation } from './githubOpenApi.js';
