extension Array {
    /// In an array sorted by `key`, the index of the last element whose key
    /// is at most `value`, or 0 when none is (segments of a map start at
    /// their first entry). Binary search.
    func lastIndex(keyAtMost value: Int, key: (Element) -> Int) -> Int {
        var low = 0
        var high = count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if key(self[mid]) <= value { low = mid } else { high = mid - 1 }
        }
        return low
    }
}

extension Array {
    /// In an array partitioned by `belongsAfter` (false for a prefix, true
    /// for the rest), the index of the first element of the rest: binary
    /// search, no allocation (render-thread safe).
    public func partitionIndex(where belongsAfter: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if belongsAfter(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
