/**
 * A field path as apimachinery's field.Path prints it: `spec.containers[0].image`,
 * `metadata.labels[app]` (map keys are bracketed without quotes).
 */
export class FieldPath {
  private constructor(private readonly text: string) {}

  static root(...names: string[]): FieldPath {
    return new FieldPath(names.join('.'));
  }

  child(...names: string[]): FieldPath {
    let text = this.text;
    for (const name of names) text = text === '' ? name : `${text}.${name}`;
    return new FieldPath(text);
  }

  index(i: number): FieldPath {
    return new FieldPath(`${this.text}[${i}]`);
  }

  key(k: string): FieldPath {
    return new FieldPath(`${this.text}[${k}]`);
  }

  toString(): string {
    return this.text;
  }
}
