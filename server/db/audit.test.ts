import { describe, expect, it } from 'vitest';
import { redactedUrl, withoutSecrets } from './audit.js';

describe('what the audit log keeps of details', () => {
  it('keeps scheme, host, port and the shape of an address, never its path, query or fragment', () => {
    expect(redactedUrl('https://hooks.slack.com/services/T0AAA/B0BBB/XXXXsecretXXXX')).toBe('https://hooks.slack.com/*/*/*/*');
    expect(redactedUrl('http://ci.example.com:8080/hook?token=s3cr3t&x=1#frag')).toBe('http://ci.example.com:8080/*?*#*');
    expect(redactedUrl('https://[::1]:8443/')).toBe('https://[::1]:8443/');
    expect(redactedUrl('not a url s3cr3t')).toBe('*');
  });

  it('redacts every address under a key ending in url, at any depth, and drops secret-looking keys', () => {
    const details = withoutSecrets({ url: 'https://h.example.com/a/s3cr3t', changed: { url: 'https://h.example.com/?token=s3cr3t', active: false }, secret: 's3cr3t', tokenId: 'id' });
    expect(details).toEqual({ url: 'https://h.example.com/*/*', changed: { url: 'https://h.example.com/?*', active: false }, tokenId: 'id' });
  });
});
