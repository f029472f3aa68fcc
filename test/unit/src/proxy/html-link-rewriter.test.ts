/**
 * The HTML rewriting of kube's proxy transport (rewriteHTML over x/net/html's tokenizer): start
 * tags printed again as Go prints them with their URL attributes rewritten, everything else byte
 * for byte, the same output whatever the chunking.
 */
import { expect } from 'chai';
import { HtmlLinkRewriter } from '../../../../src/proxy/html-link-rewriter';

const P = '/api/v1/namespaces/ns/pods/web/proxy';
const underProxy = (url: string) => (url.startsWith('/') ? `${P}${url}` : url);

function rewrite(input: string | Buffer, chunkBytes = 0): string {
  const rewriter = new HtmlLinkRewriter({ rewrite: underProxy });
  const bytes = typeof input === 'string' ? Buffer.from(input) : input;
  const out: Buffer[] = [];
  if (chunkBytes === 0) out.push(rewriter.push(bytes));
  else for (let at = 0; at < bytes.length; at += chunkBytes) out.push(rewriter.push(bytes.subarray(at, at + chunkBytes)));
  out.push(rewriter.end());
  return Buffer.concat(out).toString();
}

const PAGE = [
  '<!DOCTYPE html>',
  '<HTML><head><LINK REL=stylesheet HREF="/static/app.css"><script src=\'/js/app.js\'></script>',
  '<script>var u = "<a href=\'/not/rewritten\'>"; if (a<b) {}</script></head>',
  '<body background=/bg.png><a href="/page?a=1&amp;b=2">x</a> <a href="relative">r</a> <a href="http://example.com/">e</a>',
  '<img src=/img.png alt="A &lt; B" disabled><!-- <a href="/in/comment"> --><form action="/submit" method=post></form>',
  '<br/><textarea><a href="/raw"></textarea><p data-x=\'say "hi"\'>5 < 6</p></body></HTML>',
].join('\n');

const REWRITTEN = [
  '<!DOCTYPE html>',
  `<html><head><link rel="stylesheet" href="${P}/static/app.css"><script src="${P}/js/app.js"></script>`,
  '<script>var u = "<a href=\'/not/rewritten\'>"; if (a<b) {}</script></head>',
  `<body background="${P}/bg.png"><a href="${P}/page?a=1&amp;b=2">x</a> <a href="relative">r</a> <a href="http://example.com/">e</a>`,
  `<img src="${P}/img.png" alt="A &lt; B" disabled=""><!-- <a href="/in/comment"> --><form action="${P}/submit" method="post"></form>`,
  '<br/><textarea><a href="/raw"></textarea><p data-x="say &#34;hi&#34;">5 < 6</p></body></HTML>',
].join('\n');

describe('proxy: HTML link rewriting', () => {
  it('rewrites the URL attributes of its table and prints every start tag as Go does; text, comments, end tags and raw text pass as they are', () => {
    expect(rewrite(PAGE)).to.equal(REWRITTEN);
  });

  it('gives the same bytes whatever the chunks', () => {
    for (const size of [1, 2, 3, 7, 64]) expect(rewrite(PAGE, size), `chunks of ${size}`).to.equal(REWRITTEN);
  });

  it('decodes character references as Go does in attributes before rewriting, and escapes the result', () => {
    expect(rewrite('<a href="/q?x=1&copy=2">')).to.equal(`<a href="${P}/q?x=1&amp;copy=2">`);
    expect(rewrite('<a href="&#47;x&#x2F;y">')).to.equal(`<a href="${P}/x/y">`);
    expect(rewrite('<a title="caf&eacute; &#150;">')).to.equal('<a title="café –">');
    expect(rewrite('<a title="it&apos;s&#9">')).to.equal('<a title="it&#39;s&amp;#9">');
  });

  it('passes a tag with a named reference it does not know as it was, rather than guess', () => {
    expect(rewrite('<a href="/x" title="&hellip;">')).to.equal('<a href="/x" title="&hellip;">');
  });

  it('drops a tag cut off by the end of the body, as Go\'s tokenizer does, and keeps a cut-off comment or a lone "<"', () => {
    expect(rewrite('text <a href="/x')).to.equal('text ');
    expect(rewrite('text </di')).to.equal('text ');
    expect(rewrite('text <!-- open')).to.equal('text <!-- open');
    expect(rewrite('a < b <')).to.equal('a < b <');
  });

  it('self-closing tags, bogus comments and processing instructions', () => {
    expect(rewrite('<IMG SRC="/a.png" />')).to.equal(`<img src="${P}/a.png"/>`);
    expect(rewrite('<?xml version="1.0"?></ odd><a href=/x>')).to.equal(`<?xml version="1.0"?></ odd><a href="${P}/x">`);
  });

  it('stops rewriting when one token outgrows the limit, and sends the rest as it comes', () => {
    const rewriter = new HtmlLinkRewriter({ rewrite: underProxy, maxTokenBytes: 16 });
    const first = rewriter.push(Buffer.from('<a href="/x"><a title="a very long attribute value'));
    const second = rewriter.push(Buffer.from('"><a href="/y">'));
    expect(Buffer.concat([first, second, rewriter.end()]).toString()).to.equal(`<a href="${P}/x"><a title="a very long attribute value"><a href="/y">`);
  });
});
