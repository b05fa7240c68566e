import React, { useState } from "react";

type Props = { label: string };

/** A button that counts its clicks. */
export function Counter({ label }: Props) {
  const [n, setN] = useState(0);
  return <button onClick={() => setN(n + 1)}>{label}: {n}</button>;
}

export class Panel extends React.Component<Props> {
  render() {
    return <div className="panel">{this.props.label}</div>;
  }
}
