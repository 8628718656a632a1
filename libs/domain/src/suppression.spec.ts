import { DomainError } from './errors';
import { parseSuppressionSubject, suppressionKeyHash, suppressionKeys } from './suppression';

const issuesOf = (input: Parameters<typeof parseSuppressionSubject>[0]) => {
  try {
    parseSuppressionSubject(input, 'US');
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return (error as DomainError).details;
  }
  throw new Error('accepted');
};

describe('suppression subjects', () => {
  it('keys each kind with the normalisation the rest of Dossier uses, and masks it for the list', () => {
    expect(parseSuppressionSubject({ email: ' Jane.Doe@EXAMPLE.com ' }, 'US')).toEqual({
      kind: 'email',
      key: 'email:jane.doe@example.com',
      hint: 'j…@example.com',
    });
    expect(parseSuppressionSubject({ phone: '+44 (0)20 7946 0958' }, 'US')).toEqual({
      kind: 'phone',
      key: 'phone:+442079460958',
      hint: '+44…58',
    });
    expect(parseSuppressionSubject({ name: 'Zoë  O’Neill', birth_year: '1984' }, 'US')).toEqual({
      kind: 'name',
      key: 'name:zoe o neill:1984',
      alias: 'name:zoe oneill:1984',
      hint: 'Z… O…, 1984',
    });
  });

  it("reads a national phone number in the operator's default region, as an import reads one on a record naming no country", () => {
    expect(parseSuppressionSubject({ phone: '020 7946 0958' }, 'GB')).toEqual({
      kind: 'phone',
      key: 'phone:+442079460958',
      hint: '+44…58',
    });
    expect(parseSuppressionSubject({ phone: '(512) 555-0199' }, 'US').key).toBe('phone:+15125550199');
    // An international number is read as written, whatever the region.
    expect(parseSuppressionSubject({ phone: '+44 20 7946 0958' }, 'US').key).toBe('phone:+442079460958');
  });

  it('matches the keys made from records however they were written', () => {
    expect(suppressionKeys.email('jane.doe@Example.COM')).toBe(
      parseSuppressionSubject({ email: 'JANE.DOE@example.com' }, 'US').key,
    );
    expect(suppressionKeys.phone('020 7946 0958', 'GB')).toBe('phone:+442079460958');
    expect(suppressionKeys.name('ZOE O-NEILL', 1984)).toBe('name:zoe o neill:1984');
    // A record's name is checked under both folds; an entry's alias is the second.
    expect(suppressionKeys.names('Zoe ONeill', 1984)).toEqual(['name:zoe oneill:1984']);
    expect(suppressionKeys.names('Zoë O’Neill', 1984)).toEqual(['name:zoe o neill:1984', 'name:zoe oneill:1984']);
    expect(suppressionKeys.names('王小明', 1901)).toEqual(['name:wangxiaoming:1901', 'name:wang xiaoming:1901']);
    expect(parseSuppressionSubject({ name: 'Zoe ONeill', birth_year: 1984 }, 'US')).not.toHaveProperty('alias');
    expect(suppressionKeyHash('email:a@b.example')).toMatch(/^[0-9a-f]{64}$/);
    expect(suppressionKeyHash('email:a@b.example')).not.toBe(suppressionKeyHash('email:a@c.example'));
  });

  it.each([
    [{}, [{ field: 'body', issue: 'give exactly one of email, phone, or name with birth_year' }]],
    [{ email: 'a@b.example', phone: '+14155550100' }, [{ field: 'body', issue: expect.any(String) }]],
    [{ email: 'not an address' }, [{ field: 'email', issue: 'must be an e-mail address' }]],
    [
      { phone: '020 7946 0958' },
      [{ field: 'phone', issue: "is not a phone number in US (read in the operator's default region)" }],
    ],
    [{ phone: '+1 202 555 01' }, [{ field: 'phone', issue: 'is not a possible phone number' }]],
    [{ name: 'Jane Doe' }, [{ field: 'birth_year', issue: expect.stringMatching(/^is required with name/) }]],
    [
      { name: 'Jane Doe', birth_year: 1700 },
      [{ field: 'birth_year', issue: expect.stringMatching(/^must be a whole year from 1800 to \d{4}$/) }],
    ],
    [
      { name: 'Jane Doe', birth_year: 3000 },
      [{ field: 'birth_year', issue: expect.stringMatching(/^must be a whole year/) }],
    ],
    // Given but unreadable is not "required": the message says what is wrong with it.
    [
      { name: 'Jane Doe', birth_year: 'abc' },
      [{ field: 'birth_year', issue: expect.stringMatching(/^must be a whole year/) }],
    ],
    [
      { name: 'Jane Doe', birth_year: ' ' },
      [{ field: 'birth_year', issue: expect.stringMatching(/^must be a whole year/) }],
    ],
    [{ name: '!!', birth_year: 1980 }, [{ field: 'name', issue: 'must be a name with letters' }]],
    [{ name: '1234', birth_year: 1980 }, [{ field: 'name', issue: 'must be a name with letters' }]],
    [{ email: 'a@b.example', birth_year: 1980 }, [{ field: 'birth_year', issue: 'goes with name only' }]],
  ])('refuses %j naming the field', (input, details) => {
    expect(issuesOf(input)).toEqual(details);
  });
});
