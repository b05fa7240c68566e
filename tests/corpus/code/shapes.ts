import { EventEmitter } from "events";
import type { Point } from "./geometry";

/** Anything with an area. */
export interface Shape {
  area(): number;
  name: string;
}

export enum Colour {
  Red,
  Green,
}

// A circle centred on a point.
@sealed
export class Circle implements Shape {
  name = "circle";

  constructor(private readonly centre: Point, private radius: number) {}

  /** Area in square units. */
  @memoize
  area(): number {
    return Math.PI * this.radius ** 2;
  }
}

export namespace Geometry {
  export function distance(a: Point, b: Point): number {
    return Math.hypot(a.x - b.x, a.y - b.y);
  }
}

export function largest(shapes: Shape[]): Shape | undefined {
  return shapes.reduce((a, b) => (a.area() > b.area() ? a : b), shapes[0]);
}
