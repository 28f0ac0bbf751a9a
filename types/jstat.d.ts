declare module 'jstat' {
  /** The part of jStat.models.ols's result metabench reads (coefficients in the design matrix's column order). */
  interface OlsModel {
    readonly coef: number[];
    readonly nobs: number;
    readonly df_resid: number;
    readonly SSR: number;
    readonly t: { readonly se: number[]; readonly sigmaHat: number; readonly interval95: [number, number][] };
  }
  const jstat: {
    jStat: {
      studentt: { inv(p: number, dof: number): number };
      normal: {
        inv(p: number, mean: number, sd: number): number;
        cdf(x: number, mean: number, sd: number): number;
      };
      models: { ols(endog: number[], exog: number[][]): OlsModel };
    };
  };
  export default jstat;
}
