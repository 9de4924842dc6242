public import AcapellaScore

/// Import problems are score problems: the same located, one-line error
/// (`FILE:LINE:COL: error: MESSAGE`) the `.acasong` parser reports. Lines and
/// columns refer to the XML document (inside a `.mxl`, the root file).
public typealias ImportError = ScoreError
