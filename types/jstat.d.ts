declare module 'jstat' {
  const jstat: {
    jStat: { studentt: { inv(p: number, dof: number): number } };
  };
  export default jstat;
}
