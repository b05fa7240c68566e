#include <vector>
#include <iostream>

namespace linalg {

// A dense row-major matrix.
class Matrix {
public:
    Matrix(int rows, int cols) : rows_(rows), cols_(cols), data_(rows * cols) {}

    // Element access.
    double& at(int r, int c) { return data_[r * cols_ + c]; }

    int rows() const;

private:
    int rows_, cols_;
    std::vector<double> data_;
};

int Matrix::rows() const { return rows_; }

template <typename T>
T square(T x) {
    return x * x;
}

}  // namespace linalg

int main() {
    linalg::Matrix m(2, 2);
    std::cout << m.rows() << std::endl;
}
