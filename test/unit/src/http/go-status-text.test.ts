import { expect } from 'chai';
import { STATUS_CODES } from 'node:http';
import { goStatusText, useGoStatusLines } from '../../../../src/http/go-status-text';

/** Go 1.19's http.StatusText for the codes Carina or a proxied backend may answer with. */
const GO: Record<number, string> = {
  101: 'Switching Protocols', 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 304: 'Not Modified', 307: 'Temporary Redirect',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 406: 'Not Acceptable',
  408: 'Request Timeout', 409: 'Conflict', 410: 'Gone', 413: 'Request Entity Too Large', 414: 'Request URI Too Long',
  415: 'Unsupported Media Type', 416: 'Requested Range Not Satisfiable', 418: "I'm a teapot", 422: 'Unprocessable Entity',
  425: 'Too Early', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 501: 'Not Implemented',
  502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

describe('Go status text', () => {
  it('names every code as Go 1.19 does, "status code N" where Go has no text', () => {
    for (const [code, text] of Object.entries(GO)) expect(goStatusText(Number(code)), code).to.equal(text);
    expect(goStatusText(509)).to.equal('status code 509');
    expect(goStatusText(599)).to.equal('status code 599');
  });

  it('puts Go\'s phrases into the table Node writes HTTP/1.1 status lines from', () => {
    useGoStatusLines();
    expect(STATUS_CODES[413]).to.equal('Request Entity Too Large');
    expect(STATUS_CODES[429]).to.equal('Too Many Requests');
    expect(STATUS_CODES[599]).to.equal('status code 599');
  });
});
