/**
 * ssl.principal.mapping.rules (coordinator/auth/ssl-principal-mapper.ts),
 * with the cases of Kafka's SslPrincipalMapperTest as the reference for the
 * grammar and the results.
 */
import { describe, expect, it } from 'vitest';
import { SslPrincipalMapper } from '../../coordinator/auth/ssl-principal-mapper.js';

const map = (rules: string, dn: string): string | null => new SslPrincipalMapper(rules).name(dn);

describe('valid rules', () => {
  it('DEFAULT keeps the subject', () => {
    expect(map('DEFAULT', 'CN=x\\,y,O=z')).toBe('CN=x\\,y,O=z');
    expect(new SslPrincipalMapper().name('CN=a')).toBe('CN=a');
  });

  it('the first rule that matches the whole subject wins; the rest are not tried', () => {
    const rules =
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/, RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, DEFAULT';
    expect(map(rules, 'CN=Duke,OU=ServiceUsers,O=Org,C=US')).toBe('Duke');
    expect(map(rules, 'CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US')).toBe('duke@sme');
    expect(map(rules, 'cn=duke,ou=JavaSoft,dc=sun,dc=com')).toBe('DUKE@JAVASOFT');
    expect(map(rules, 'OU=JavaSoft,O=Sun Microsystems,C=US')).toBe('OU=JavaSoft,O=Sun Microsystems,C=US');
  });

  it('no rule applies: null (the client is refused)', () => {
    expect(map('RULE:^CN=(.*)$/$1/', 'O=x')).toBeNull();
  });

  it('a pattern matches the whole subject, not a part of it', () => {
    expect(map('RULE:CN=admin/root/', 'CN=admin,O=Acme')).toBeNull();
  });

  it('every match is replaced, as Java replaceAll (the empty match at the end too)', () => {
    expect(map('RULE:(.*)/x$1x/', 'ab')).toBe('xabxxx');
    expect(map('RULE:^(.*)$/x$1x/', 'ab')).toBe('xabx');
  });

  it('escaped "/" and "," inside a rule; blanks and empty rules skipped', () => {
    expect(map(' , RULE:^CN=(.*?)\\/(.*)$/$1,$2/ ,, DEFAULT ', 'CN=a/b')).toBe('a,b');
  });

  it('replacement syntax: $n past the groups is literal, $12 is taken while it names a group, \\$ and ${name}', () => {
    expect(map('RULE:^CN=(.*)$/$1-$4/', 'CN=x')).toBe('x-$4');
    expect(map('RULE:^(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)$/$12$123/', 'abcdefghijkl')).toBe('ll3');
    expect(map('RULE:^CN=(.*)$/\\$$1/', 'CN=x')).toBe('$x');
    expect(map('RULE:^CN=(?<who>[a-z]+)$/${who}!/', 'CN=duke')).toBe('duke!');
    expect(map('RULE:^CN=(.*)$/$0/', 'CN=x')).toBe('CN=x');
  });

  it('an unmatched optional group is empty', () => {
    expect(map('RULE:^CN=(a)?(.*)$/[$1]$2/', 'CN=bc')).toBe('[]bc');
  });
});

describe('invalid rules are refused with the rule named', () => {
  const refused = (rules: string, message: RegExp): void => {
    expect(() => new SslPrincipalMapper(rules)).toThrow(message);
  };
  it('unknown words and trailing junk', () => {
    refused('DEFAULT, BOGUS', /invalid rule "BOGUS"/);
    refused('DEFAULTX', /is followed by "X"/);
    refused('RULE:^CN=(.*)$/$1/LU', /is followed by "U"/);
    refused('RULE:^CN=(.*)$/$1/L junk', /is followed by "junk"/);
  });
  it('a RULE without its three slashes', () => {
    refused('RULE:^CN=(.*)$', /not RULE:pattern\/replacement\/\[LU\]/);
    refused('RULE:^CN=(.*)$/$1', /not RULE:pattern\/replacement\/\[LU\]/);
  });
  it('a bad regular expression', () => {
    refused('RULE:^CN=(.*$/$1/', /not a valid regular expression/);
  });
  it('a bad replacement', () => {
    refused('RULE:^CN=.*$/$1/', /the pattern has no groups/);
    refused('RULE:^CN=(.*)$/$x/', /not followed by a group number/);
    refused('RULE:^CN=(.*)$/${nope}/', /names the group \$\{nope\}/);
    refused('RULE:^CN=(.*)$/x\\/', /lone backslash|not RULE:pattern/);
  });
  it('no rule at all', () => {
    refused('', /has no rule/);
    refused(' , ', /has no rule/);
  });
});
